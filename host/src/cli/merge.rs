//! `weft merge`: one result from the `--json` results of an exploration's
//! shards (`weft explore --shard K/N`), merged by [`crate::report::merge`].

use super::{EXIT_FAILURE, EXIT_INCONCLUSIVE, EXIT_PASS};
use crate::report::merge::merge;
use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;
use std::io::Write as _;
use std::path::PathBuf;

/// Combine the `--json` results of an exploration's shards into one.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' results (`weft explore --shard K/N --json > FILE`).
    #[arg(required = true)]
    results: Vec<PathBuf>,
    /// Print the merged result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: MergeArgs) -> Result<u8> {
    let mut results = Vec::new();
    for path in &args.results {
        let name = path.display().to_string();
        let text = crate::input::read_text(path, crate::input::TEXT_LIMIT)
            .with_context(|| format!("cannot read `{name}`"))?;
        let value: Value = serde_json::from_str(&text)
            .with_context(|| format!("`{name}` is not the --json result of `weft explore`"))?;
        results.push((name, value));
    }
    let merged = merge(&results)?;
    let failed = merged.get("failure").is_some_and(|f| !f.is_null());
    let inconclusive = merged
        .get("inconclusive_because")
        .and_then(Value::as_str)
        .filter(|_| !failed);
    if args.json {
        let _ = writeln!(
            super::terminal::stdout(),
            "{}",
            serde_json::to_string_pretty(&merged)?
        );
    } else {
        let executions = merged["executions"].as_u64().unwrap_or(0);
        let missing = merged["shards_missing"].as_u64().unwrap_or(0);
        let shards = format!(
            "{} {}{}",
            results.len(),
            if results.len() == 1 {
                "shard"
            } else {
                "shards"
            },
            if missing > 0 {
                format!(" ({missing} missing)")
            } else {
                String::new()
            }
        );
        if failed {
            let _ = writeln!(
                super::terminal::stdout(),
                "weft: {} failure at execution {} ({shards}, {executions} executions in all)",
                merged["failure"]["kind"].as_str().unwrap_or("a"),
                merged["failing_execution_index"],
            );
            if let Some(file) = merged.get("replay_file").and_then(Value::as_str) {
                let _ = writeln!(super::terminal::stdout(), "replay file: {file}");
            }
        } else {
            let _ = writeln!(
                super::terminal::stdout(),
                "weft: no failure in {executions} executions ({shards})"
            );
            if let Some(why) = inconclusive {
                let _ = writeln!(super::terminal::stdout(), "INCONCLUSIVE: {why}");
            }
        }
    }
    Ok(if failed {
        EXIT_FAILURE
    } else if inconclusive.is_some() {
        EXIT_INCONCLUSIVE
    } else {
        EXIT_PASS
    })
}
