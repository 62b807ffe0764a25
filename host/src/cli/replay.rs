//! `weft replay`: re-run a saved execution exactly.

use super::common::{OutputArgs, Report, read_module};
use crate::replay::file::ReplayFile;
use crate::replay::replay;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

/// Re-run a saved failure exactly and check it is the same execution.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The replay file (`*.weft.json`).
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
}

pub fn run(args: ReplayArgs) -> Result<u8> {
    let file = ReplayFile::load(&args.file)?;
    let module = args.module.clone().unwrap_or_else(|| {
        let recorded = PathBuf::from(&file.module.path);
        let beside = args.file.parent().map(|dir| dir.join(&recorded));
        match beside {
            Some(p) if !recorded.exists() && recorded.is_relative() && p.exists() => p,
            _ => recorded,
        }
    });
    let wasm = read_module(&module)?;
    let start = Instant::now();
    let result =
        replay(&file, &wasm).with_context(|| format!("cannot replay `{}`", args.file.display()))?;
    let program = crate::execution::load(&wasm, file.instrument)?;
    let failure = result.outcome.failure();
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
    };
    Ok(Report {
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
        extra: serde_json::json!({ "reproduced": true }),
    }
    .print(&output))
}
