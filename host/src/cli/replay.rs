//! `weft replay`: re-run a saved execution exactly.

use super::args::OutputArgs;
use super::files::{Loaded, load_replay};
use super::output::print_report;
use crate::output_paths::{Kind, Outputs};
use crate::replay::{Replayed, replay};
use crate::report::text::Report;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

/// Re-run a saved failure exactly and check it is the same execution.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The replay file (`*.weft.json`), or a bundle (`*.weft`).
    file: PathBuf,
    /// The module, if not at the path the file records.
    #[arg(long)]
    module: Option<PathBuf>,
    /// Print one JSON object on stdout instead of the human report.
    #[arg(long)]
    json: bool,
    /// Show every step of the interleaving, the guest's runtime included.
    #[arg(long)]
    full_trace: bool,
    /// Show the interleaving as a table with one column per thread.
    #[arg(long)]
    table: bool,
    /// Also write the report as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

pub fn run(args: ReplayArgs) -> Result<u8> {
    let Loaded {
        file, module, wasm, ..
    } = load_replay(&args.file, args.module.clone())?;
    Outputs::new()
        .input("the replay file", &args.file)
        .input("the module", &module)
        .output("--html", Kind::Report, args.html.as_deref())
        .check()?;
    let start = Instant::now();
    let Replayed {
        result,
        failure,
        program,
    } = replay(&file, &wasm).with_context(|| format!("cannot replay `{}`", args.file.display()))?;
    let headline = match &failure {
        Some(f) => format!(
            "reproduced the {} failure of `{}` (same trace {})",
            f.kind.name(),
            args.file.display(),
            result.trace_hash
        ),
        None => format!(
            "replayed `{}`: no failure (same trace {})",
            args.file.display(),
            result.trace_hash
        ),
    };
    let output = OutputArgs {
        json: args.json,
        save_failure: None,
        no_save: true,
        full_trace: args.full_trace,
        table: args.table,
        html: args.html.clone(),
        replay_tag: None,
        no_minimize: true,
    };
    let report = Report {
        module: &module,
        wasm: &wasm,
        sites: program.sites(),
        executions: 1,
        distinct_traces: 1,
        elapsed: start.elapsed(),
        headline,
        result: Some(&result),
        failure: failure.as_ref(),
        replay_file: Some(args.file.clone()),
        minimization: None,
        inconclusive: result.cut().map(|cut| cut.describe()),
        advice: failure
            .as_ref()
            .and_then(|_| crate::report::advice::for_failure(&result, file.run.run.sleeps)),
        extra: serde_json::json!({ "reproduced": true }),
    };
    Ok(print_report(&report, &output))
}
