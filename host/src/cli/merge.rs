//! `weft merge`: one result from the `--json` results of an exploration's
//! shards (`weft explore --shard K/N`).
//!
//! The shards ran disjoint executions of one exploration, so the merged
//! result counts all their executions, and its failure is the one of the
//! lowest execution index: the one a single run would have reported first.

use super::{EXIT_FAILURE, EXIT_PASS};
use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};
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

/// What must be the same in every shard's result.
const SAME: [&str; 4] = ["module", "strategy", "seed", "pct_depth"];

/// Merges shard results; fails when they are not shards of one exploration.
fn merge(results: &[(String, Value)]) -> Result<Value> {
    let (first_name, first) = &results[0];
    let mut shards = Vec::new();
    for (name, result) in results {
        if result.get("executions").and_then(Value::as_u64).is_none() {
            bail!("`{name}` is not the --json result of `weft explore`");
        }
        for key in SAME {
            if result.get(key) != first.get(key) {
                bail!(
                    "`{name}` and `{first_name}` are not shards of one exploration: their `{key}` differ ({} and {})",
                    result.get(key).unwrap_or(&Value::Null),
                    first.get(key).unwrap_or(&Value::Null)
                );
            }
        }
        let shard = result.get("shard").and_then(Value::as_str).unwrap_or("0/1");
        if shards.contains(&shard) {
            bail!("shard {shard} appears twice (`{name}`)");
        }
        shards.push(shard);
    }
    let total = |key: &str| -> u64 {
        results
            .iter()
            .filter_map(|(_, r)| r.get(key).and_then(Value::as_u64))
            .sum()
    };
    let failing = results
        .iter()
        .filter(|(_, r)| r.get("failure").is_some_and(|f| !f.is_null()))
        .min_by_key(|(_, r)| {
            r.get("failing_execution_index")
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX)
        });
    let mut merged = match failing {
        Some((_, result)) => result.clone(),
        None => first.clone(),
    };
    let count = shards
        .iter()
        .filter_map(|s| s.split_once('/').and_then(|(_, n)| n.parse::<usize>().ok()))
        .max()
        .unwrap_or(1);
    let fields = merged.as_object_mut().expect("checked above: an object");
    fields.insert("executions".into(), json!(total("executions")));
    fields.insert("discarded".into(), json!(total("discarded")));
    // Distinct traces cannot be told apart across shards: the sum bounds
    // them from above, unless a shard saw more than it remembers (then
    // nothing bounds them).
    let capped = results
        .iter()
        .any(|(_, r)| r.get("distinct_traces_at_least") == Some(&json!(true)));
    fields.insert(
        "distinct_traces_at_most".into(),
        if capped {
            json!(null)
        } else {
            json!(total("distinct_traces"))
        },
    );
    fields.remove("distinct_traces");
    fields.remove("distinct_traces_at_least");
    fields.insert("elapsed_ms".into(), json!(null));
    fields.insert("shard".into(), json!(null));
    fields.insert("shards".into(), json!(shards));
    fields.insert("shards_missing".into(), json!(count - shards.len()));
    Ok(merged)
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
            "{} shards{}",
            results.len(),
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
        }
    }
    Ok(if failed { EXIT_FAILURE } else { EXIT_PASS })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(shard: &str, executions: u64, failure: Option<u64>) -> (String, Value) {
        (
            format!("{shard}.json"),
            json!({
                "module": "m.wasm", "strategy": "portfolio", "seed": 0, "pct_depth": null,
                "shard": shard, "executions": executions, "discarded": 1, "distinct_traces": 5,
                "failure": failure.map(|i| json!({"kind": "assertion", "at": i})),
                "failing_execution_index": failure,
            }),
        )
    }

    #[test]
    fn the_lowest_failing_index_wins_and_counts_add_up() {
        let merged = merge(&[
            shard("0/3", 10, Some(30)),
            shard("1/3", 8, Some(22)),
            shard("2/3", 12, None),
        ])
        .unwrap();
        assert_eq!(merged["executions"], 30);
        assert_eq!(merged["discarded"], 3);
        assert_eq!(merged["failing_execution_index"], 22);
        assert_eq!(merged["failure"]["at"], 22);
        assert_eq!(merged["shards_missing"], 0);
        let merged = merge(&[shard("0/3", 10, None)]).unwrap();
        assert!(merged["failure"].is_null());
        assert_eq!(merged["shards_missing"], 2);
    }

    #[test]
    fn results_of_different_explorations_do_not_merge() {
        let mut other = shard("1/2", 3, None);
        other.1["seed"] = json!(7);
        let error = merge(&[shard("0/2", 3, None), other]).unwrap_err();
        assert!(error.to_string().contains("`seed` differ"), "{error}");
        assert!(merge(&[shard("0/2", 3, None), shard("0/2", 3, None)]).is_err());
        let not_explore = ("x.json".to_string(), json!({"hello": 1}));
        assert!(merge(&[not_explore]).is_err());
    }
}
