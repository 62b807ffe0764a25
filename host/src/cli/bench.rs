//! `weft bench`: hot-path figures on this machine.

use super::files::read_module;
use anyhow::Result;
use clap::Args;
use std::io::Write as _;
use std::path::PathBuf;

/// Measure what an execution costs, piece by piece (a scheduling point, a
/// context switch, an execution's start and end, a thread, a plain access
/// under the race check), and executions per second of a module (build in
/// release for real figures).
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Module whose executions per second are measured (e.g.
    /// target/samples/lost-update.wasm).
    module: PathBuf,
    /// Executions to time.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    executions: u64,
    /// Most wall time for the executions of the module (all three
    /// measurements; each stops early when its share runs out).
    #[arg(long, value_parser = super::args::parse_positive_duration, default_value = "60s")]
    time_limit: std::time::Duration,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: BenchArgs) -> Result<u8> {
    let wasm = read_module(&args.module)?;
    let report = crate::bench::measure(&wasm, args.executions, args.time_limit)?;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "hook_ns": report.hook_ns,
                "decision_ns": report.decision_ns,
                "switch_ns": report.switch_ns,
                "wasmtime_switch_ns": report.wasmtime_switch_ns,
                "execution_ns": report.execution_ns,
                "thread_ns": report.thread_ns,
                "race_log_ns": report.race_log_ns,
                "executions_per_second": report.executions_per_second,
                "pct_executions_per_second": report.pct_executions_per_second,
                "race_executions_per_second": report.race_executions_per_second,
                "executions": report.executions,
                "startup_ns": {
                    "instrument": report.startup.instrument.as_nanos() as u64,
                    "engine": report.startup.engine.as_nanos() as u64,
                    "compile": report.startup.compile.as_nanos() as u64,
                    "link": report.startup.link.as_nanos() as u64,
                    "to_first_execution": report.startup_to_first_execution.as_nanos() as u64,
                },
            })
        );
    } else {
        println!(
            "scheduling point without switch: {:>8.1} ns",
            report.hook_ns
        );
        println!(
            "scheduling point with decision:  {:>8.1} ns",
            report.decision_ns
        );
        println!(
            "context switch:                  {:>8.1} ns",
            report.switch_ns
        );
        println!(
            "  in wasmtime alone, with a host call: {:>5.1} ns (the floor under a point that switches, {:.1} ns)",
            report.wasmtime_switch_ns,
            report.decision_ns + report.switch_ns
        );
        println!(
            "an execution (start and end):    {:>8.0} ns",
            report.execution_ns
        );
        println!(
            "a thread (spawn, exit, join):    {:>8.0} ns",
            report.thread_ns
        );
        println!(
            "a plain access, race check:      {:>8.1} ns",
            report.race_log_ns
        );
        println!(
            "executions of {}, random: {:>8.0} /s ({} executions)",
            args.module.display(),
            report.executions_per_second,
            report.executions
        );
        println!(
            "executions of {}, pct:    {:>8.0} /s ({} executions)",
            args.module.display(),
            report.pct_executions_per_second,
            report.executions
        );
        println!(
            "executions of {}, random, race check: {:>8.0} /s ({} executions)",
            args.module.display(),
            report.race_executions_per_second,
            report.executions
        );
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        println!(
            "start-up, compile cache warm:    {:>8.1} ms to the end of the first execution (instrument {:.1} ms, engine {:.1} ms, compile {:.1} ms, linker {:.1} ms)",
            ms(report.startup_to_first_execution),
            ms(report.startup.instrument),
            ms(report.startup.engine),
            ms(report.startup.compile),
            ms(report.startup.link),
        );
        if report.executions < args.executions {
            let _ = writeln!(
                super::terminal::stdout(),
                "(fewer executions than asked: the time limit of {} came first)",
                humantime::format_duration(args.time_limit)
            );
        }
    }
    Ok(super::EXIT_PASS)
}
