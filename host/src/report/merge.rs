//! Merging the `--json` results of an exploration's shards (`weft explore
//! --shard K/N`) into one, for `weft merge`.
//!
//! The shards ran disjoint executions of one exploration, so the merged
//! result counts all their executions, and its failure is the one of the
//! lowest execution index: the one a single run would have reported first.
//! The merge works on the shards' own JSON objects, field by field, so
//! that what it does not combine passes through as the shards wrote it.

use super::digest;
use crate::explore::Shard;
use anyhow::{Result, anyhow, bail};
use serde_json::{Value, json};

/// One shard's result, read and checked.
struct ShardResult<'a> {
    name: &'a str,
    value: &'a Value,
    shard: Shard,
    executions: u64,
    discarded: u64,
    distinct_traces: u64,
    /// The exploration index of its failing execution, if one failed.
    failing: Option<u64>,
    /// Why the shard reached no verdict, when it is inconclusive.
    inconclusive: Option<String>,
}

impl<'a> ShardResult<'a> {
    /// Reads the fields of `value`, the result in the file `name`, that a
    /// merge needs, and checks they are what `weft explore` writes.
    fn read(name: &'a str, value: &'a Value) -> Result<Self> {
        let not_explore = || {
            anyhow!(
                "`{name}` is not the --json result of `weft explore` (a result of an older weft lacks the exploration's identity: run the shards again)"
            )
        };
        let identity = value.get("exploration").ok_or_else(not_explore)?;
        let count = |key: &str| -> Result<u64> {
            match value.get(key) {
                None | Some(Value::Null) => Ok(0),
                Some(v) => v
                    .as_u64()
                    .ok_or_else(|| anyhow!("`{name}`: `{key}` is {v}, not a count of executions")),
            }
        };
        if !identity.is_object() || value.get("executions").is_none() {
            return Err(not_explore());
        }
        if !digest::intact(value) {
            bail!(
                "`{name}` is not the result weft wrote: a field was changed after (its `digest` does not match); run the shard again"
            );
        }
        let shard = match value.get("shard") {
            None | Some(Value::Null) => Shard::default(),
            Some(Value::String(text)) => text
                .parse::<Shard>()
                .map_err(|e| anyhow!("`{name}`: {e}"))?,
            Some(other) => bail!("`{name}`: `shard` is {other}, not K/N"),
        };
        if identity.get("shards").and_then(Value::as_u64) != Some(shard.count) {
            bail!(
                "`{name}` says it is shard {shard}, but its exploration was split into {} shards",
                identity.get("shards").unwrap_or(&Value::Null)
            );
        }
        let failed = value.get("failure").is_some_and(|f| !f.is_null());
        let failing = match (failed, value.get("failing_execution_index")) {
            (false, None | Some(Value::Null)) => None,
            (true, Some(index)) => match index.as_u64() {
                Some(index) if shard.owns(index) => Some(index),
                _ => bail!(
                    "`{name}`: its failing execution index {index} is not an execution of shard {shard}"
                ),
            },
            (true, None) => bail!("`{name}` has a failure but no failing execution index"),
            (false, Some(index)) => {
                bail!("`{name}` has a failing execution index {index} but no failure")
            }
        };
        let status = value.get("status").and_then(Value::as_str);
        let inconclusive = match (status, failed) {
            (Some("failure"), true) | (Some("pass"), false) => None,
            (Some("inconclusive"), false) => Some(
                value
                    .get("inconclusive_because")
                    .and_then(Value::as_str)
                    .unwrap_or("a limit cut its executions short")
                    .to_string(),
            ),
            _ => bail!(
                "`{name}`: its status {} does not go with its failure",
                value.get("status").unwrap_or(&Value::Null)
            ),
        };
        Ok(ShardResult {
            name,
            value,
            shard,
            inconclusive,
            executions: count("executions")?,
            discarded: count("discarded")?,
            distinct_traces: count("distinct_traces")?,
            failing,
        })
    }

    /// The exploration's identity (module, instrumentation, setup,
    /// strategy).
    fn identity(&self) -> &Value {
        &self.value["exploration"]
    }
}

/// The first field, as a dotted path, in which two explorations' identities
/// differ, with both values.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<(String, Value, Value)> {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|key| {
                let (x, y) = (
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                );
                let inner = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                first_difference(x, y, &inner)
            })
        }
        _ if a == b => None,
        _ => Some((path.to_string(), a.clone(), b.clone())),
    }
}

/// The sum of `values`, or an error when it does not fit in 64 bits.
fn sum(mut values: impl Iterator<Item = u64>, what: &str) -> Result<u64> {
    values.try_fold(0u64, |total, v| {
        total
            .checked_add(v)
            .ok_or_else(|| anyhow!("the shards' {what} add up to more than 2^64: hand-edited?"))
    })
}

/// Merges shard results; fails when they are not shards of one exploration.
pub fn merge(results: &[(String, Value)]) -> Result<Value> {
    let shards = results
        .iter()
        .map(|(name, value)| ShardResult::read(name, value))
        .collect::<Result<Vec<_>>>()?;
    let first = &shards[0];
    let mut taken = std::collections::BTreeSet::new();
    for result in &shards {
        if let Some((key, mine, theirs)) = first_difference(result.identity(), first.identity(), "")
        {
            let what = match key.as_str() {
                "module_blake3" => "they explore different modules".to_string(),
                "shards" => format!("one is split into {mine} shards, the other into {theirs}"),
                _ => format!("their `{key}` differ ({mine} and {theirs})"),
            };
            bail!(
                "`{}` and `{}` are not shards of one exploration: {what}",
                result.name,
                first.name
            );
        }
        if !taken.insert(result.shard.index) {
            bail!("shard {} appears twice (`{}`)", result.shard, result.name);
        }
    }
    let failing = shards
        .iter()
        .filter(|r| r.failing.is_some())
        .min_by_key(|r| r.failing);
    let mut merged = failing.unwrap_or(first).value.clone();
    let executions = sum(shards.iter().map(|r| r.executions), "executions")?;
    let discarded = sum(shards.iter().map(|r| r.discarded), "discarded executions")?;
    let distinct = sum(shards.iter().map(|r| r.distinct_traces), "distinct traces")?;
    let count = first.shard.count;
    let fields = merged
        .as_object_mut()
        .expect("read checked it is an object");
    fields.insert("executions".into(), json!(executions));
    fields.insert("discarded".into(), json!(discarded));
    // Distinct traces cannot be told apart across shards: the sum bounds
    // them from above, unless a shard saw more than it remembers (then
    // nothing bounds them).
    let capped = shards
        .iter()
        .any(|r| r.value.get("distinct_traces_at_least") == Some(&json!(true)));
    fields.insert(
        "distinct_traces_at_most".into(),
        if capped { json!(null) } else { json!(distinct) },
    );
    fields.remove("distinct_traces");
    fields.remove("distinct_traces_at_least");
    fields.insert("elapsed_ms".into(), json!(null));
    fields.insert("shard".into(), json!(null));
    let names: Vec<String> = shards.iter().map(|r| r.shard.to_string()).collect();
    fields.insert("shards".into(), json!(names));
    let missing = count - shards.len() as u64;
    fields.insert("shards_missing".into(), json!(missing));
    // Without a failure, the merged result is a pass only when every
    // shard ran and passed: a shard that reached no verdict, or one that
    // is missing, leaves executions unaccounted for.
    if failing.is_none() {
        let why = shards
            .iter()
            .find_map(|r| {
                r.inconclusive
                    .as_ref()
                    .map(|why| format!("shard {} reached no verdict: {why}", r.shard))
            })
            .or_else(|| {
                (missing > 0).then(|| {
                    let absent: Vec<String> = (0..count)
                        .filter(|i| !taken.contains(i))
                        .take(5)
                        .map(|i| format!("{i}/{count}"))
                        .collect();
                    let more = if missing > 5 { ", ..." } else { "" };
                    format!(
                        "{missing} of {count} shards missing ({}{more}): their executions were not seen",
                        absent.join(", ")
                    )
                })
            });
        fields.insert(
            "status".into(),
            json!(if why.is_some() {
                "inconclusive"
            } else {
                "pass"
            }),
        );
        fields.insert("inconclusive_because".into(), json!(why));
    }
    digest::seal(&mut merged);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(shard: &str, executions: u64, failure: Option<u64>) -> (String, Value) {
        let (name, mut value) = unsealed(shard, executions, failure);
        digest::seal(&mut value);
        (name, value)
    }

    /// A shard's result as weft writes it but for its digest.
    fn unsealed(shard: &str, executions: u64, failure: Option<u64>) -> (String, Value) {
        let count: u64 = shard.split_once('/').unwrap().1.parse().unwrap();
        (
            format!("{shard}.json"),
            json!({
                "status": if failure.is_some() { "failure" } else { "pass" },
                "module": "m.wasm", "strategy": "portfolio", "seed": 0, "pct_depth": null,
                "shard": shard, "executions": executions, "discarded": 1, "distinct_traces": 5,
                "failure": failure.map(|i| json!({"kind": "assertion", "at": i})),
                "failing_execution_index": failure,
                "exploration": {
                    "module_blake3": "ab", "strategy": "portfolio", "seed": 0, "shards": count,
                    "setup": {"races": "fail", "limits": {"max_steps": 1000}},
                },
            }),
        )
    }

    fn refused(results: &[(String, Value)], expected: &str) {
        let error = merge(results).unwrap_err().to_string();
        assert!(error.contains(expected), "{error}");
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
        other.1["exploration"]["seed"] = json!(7);
        digest::seal(&mut other.1);
        refused(&[shard("0/2", 3, None), other], "`seed` differ");
        let mut other = shard("1/2", 3, None);
        other.1["exploration"]["module_blake3"] = json!("cd");
        digest::seal(&mut other.1);
        refused(&[shard("0/2", 3, None), other], "different modules");
        let mut other = shard("1/2", 3, None);
        other.1["exploration"]["setup"]["limits"]["max_steps"] = json!(5);
        digest::seal(&mut other.1);
        refused(
            &[shard("0/2", 3, None), other],
            "`setup.limits.max_steps` differ",
        );
        refused(
            &[shard("0/2", 3, None), shard("0/2", 3, None)],
            "appears twice",
        );
        refused(
            &[shard("0/4", 3, None), shard("1/2", 3, None)],
            "into 2 shards",
        );
        let not_explore = ("x.json".to_string(), json!({"hello": 1}));
        refused(&[not_explore], "not the --json result");
        let mut older = shard("0/2", 3, None);
        older.1.as_object_mut().unwrap().remove("exploration");
        digest::seal(&mut older.1);
        refused(&[older], "older weft");
    }

    #[test]
    fn hand_edited_results_are_refused() {
        let mut banana = shard("0/2", 3, None);
        banana.1["shard"] = json!("banana");
        digest::seal(&mut banana.1);
        refused(&[banana], "not a shard");
        let mut beyond = shard("0/2", 3, None);
        beyond.1["shard"] = json!("5/2");
        digest::seal(&mut beyond.1);
        refused(&[beyond], "not a shard");
        let mut split = shard("0/2", 3, None);
        split.1["exploration"]["shards"] = json!(4);
        digest::seal(&mut split.1);
        refused(&[split], "split into 4 shards");
        for index in [json!("zero"), json!(-5), json!(3)] {
            let mut edited = shard("0/2", 3, Some(2));
            edited.1["failing_execution_index"] = index;
            digest::seal(&mut edited.1);
            refused(&[edited], "is not an execution of shard 0/2");
        }
        let mut negative = shard("0/2", 3, None);
        negative.1["executions"] = json!(-1);
        digest::seal(&mut negative.1);
        refused(&[negative], "not a count");
        refused(
            &[shard("0/2", u64::MAX, None), shard("1/2", 2, None)],
            "more than 2^64",
        );
    }

    #[test]
    fn a_result_changed_after_weft_wrote_it_is_refused() {
        let mut edited = shard("0/2", 3, None);
        edited.1["executions"] = json!(1_000_000_000_000u64);
        refused(&[edited], "a field was changed");
        let mut status = shard("0/2", 3, None);
        status.1["status"] = json!("failure");
        digest::seal(&mut status.1);
        refused(&[status], "does not go with its failure");
        let (_, unsealed) = unsealed("0/2", 3, None);
        refused(&[("old.json".into(), unsealed)], "a field was changed");
    }

    #[test]
    fn inconclusive_or_missing_shards_are_no_pass() {
        let mut cut = shard("1/2", 3, None);
        cut.1["status"] = json!("inconclusive");
        cut.1["inconclusive_because"] = json!("3 of 3 executions cut short by a limit");
        digest::seal(&mut cut.1);
        let merged = merge(&[shard("0/2", 3, None), cut.clone()]).unwrap();
        assert_eq!(merged["status"], "inconclusive");
        let why = merged["inconclusive_because"].as_str().unwrap();
        assert!(why.contains("shard 1/2 reached no verdict"), "{why}");
        let merged = merge(&[shard("0/3", 3, None)]).unwrap();
        assert_eq!(merged["status"], "inconclusive");
        let why = merged["inconclusive_because"].as_str().unwrap();
        assert!(why.contains("2 of 3 shards missing (1/3, 2/3)"), "{why}");
        // A failure is a failure, whatever the other shards say.
        let merged = merge(&[shard("0/3", 3, Some(6))]).unwrap();
        assert_eq!(merged["status"], "failure");
        let merged = merge(&[shard("0/2", 3, None), shard("1/2", 3, None)]).unwrap();
        assert_eq!(merged["status"], "pass");
        assert!(digest::intact(&merged));
    }
}
