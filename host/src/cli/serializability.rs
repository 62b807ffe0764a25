//! `weft serializability`: atomic-set serializability violations, found by
//! AssetFuzzer or by random schedules with a monitor.

use super::args::{ModuleArgs, OutputArgs};
use super::output::print_findings;
use super::output::write_report_page;
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::debuginfo::symbols::Symbols;
use crate::debuginfo::variables::global_region;
use crate::instrument::Points;
use crate::replay::file::FoundBy;
use crate::replay::finish::Finished;
use crate::report::serializability::{SerialFindings, highlight_violation};
use crate::report::text::Report;
use crate::sched::Strategy;
use crate::serializability::atomic_sets::AtomicSet;
use crate::serializability::driver::{SerialOptions, SerialStrategy, search};
use crate::serializability::units::unit_calls;
use anyhow::{Result, bail};
use clap::Args;

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
    args.module.atomic_sets = atomic_sets(&symbols, &args.atomic_set)?;
    args.output.outputs(&args.module.module, None).check()?;
    let (wasm, mut program) = args.module.load()?;
    args.module.unit_calls = unit_calls(&program, &symbols, &args.unit_of_work)?;
    let options = SerialOptions {
        strategy: args.strategy,
        budget: args.iterations,
        profile_runs: args.profile_runs,
        attempts: args.attempts,
        seed: args.seed,
        setup: args.module.setup(),
    };
    let mut report = search(&mut program, &options)?;
    if !report.annotated && report.crash.is_none() {
        bail!(
            "the module registered no atomic set and ran no unit of work: declare them with the SDK (`atomic_set`, `unit_of_work`; C: `weft_atomic_set`, `weft_unit_begin/end`)"
        );
    }
    let mut finished = Finished::default();
    let mut first_failure = None;
    if let Some(found) = report.found.first_mut() {
        let mut failure = found
            .execution
            .outcome
            .failure()
            .unwrap_or_else(|| found.violation().failure(&found.log));
        let mut execution = found.execution.clone();
        finished = args.output.finish(&args.module.module).failure(
            &mut program,
            args.module.replay_run(&wasm),
            &mut execution,
            &mut failure,
            FoundBy {
                strategy: Strategy::Random,
                seed: found.seed,
                pct_depth: None,
                execution: found.index,
            },
        )?;
        found.move_to(execution);
        first_failure = Some(failure);
    }
    let first = report.found.first();
    let findings = SerialFindings {
        search: &report,
        strategy: args.strategy,
        profile_runs: args.profile_runs,
        first_failure: first_failure.as_ref(),
        program: &program,
        symbols: &symbols,
        minimization: finished.minimization,
        replay_file: finished.replay_file.as_deref(),
    };
    print_findings(args.output.json, || findings.json(), || findings.text());
    let shown = findings.shown();
    let page = Report {
        module: &args.module.module,
        wasm: &wasm,
        sites: program.sites(),
        executions: report.executions,
        distinct_traces: 0,
        elapsed: report.elapsed,
        headline: findings.headline(),
        result: shown.as_ref().map(|(r, _)| *r),
        failure: shown.as_ref().map(|(_, f)| f),
        replay_file: finished.replay_file.clone(),
        minimization: finished.minimization,
        inconclusive: None,
        advice: None,
        extra: serde_json::Value::Null,
    };
    write_report_page(&page, &args.output, |page| {
        if let Some(found) = first {
            highlight_violation(page, found);
        }
    })?;
    Ok(if first.is_some() || report.crash.is_some() {
        EXIT_FAILURE
    } else {
        EXIT_PASS
    })
}

/// The atomic sets `--atomic-set` names: global variables (or one field
/// of one) whose memory the module's DWARF says where it is.
fn atomic_sets(symbols: &Symbols, names: &[String]) -> Result<Vec<AtomicSet>> {
    names
        .iter()
        .map(|name| {
            let dwarf = symbols.dwarf().ok_or_else(|| {
                anyhow::anyhow!("--atomic-set `{name}` needs DWARF debug information in the module")
            })?;
            let region = global_region(dwarf, name).map_err(anyhow::Error::msg)?;
            Ok(AtomicSet {
                name: name.clone(),
                start: region.start,
                len: region.len,
            })
        })
        .collect()
}
