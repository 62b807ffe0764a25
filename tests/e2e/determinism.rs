//! The same seed gives the same schedule; different seeds different ones.

use crate::support::{arg, sample, weft};

fn run(seed: &str, strategy: &str) -> (String, u64) {
    let module = sample("lost-update");
    let (out, _dir) = weft(&[
        "run",
        arg(&module),
        "--seed",
        seed,
        "--strategy",
        strategy,
        "--json",
        "--no-save",
    ]);
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    let json = out.json();
    (
        json["trace_hash"].as_str().unwrap().to_string(),
        json["decisions"].as_u64().unwrap(),
    )
}

#[test]
fn same_seed_same_schedule() {
    for strategy in ["random", "pct"] {
        assert_eq!(run("42", strategy), run("42", strategy));
    }
}

#[test]
fn different_seeds_different_schedules() {
    for strategy in ["random", "pct"] {
        let traces: std::collections::HashSet<String> = ["1", "2", "3", "4"]
            .iter()
            .map(|s| run(s, strategy).0)
            .collect();
        assert!(traces.len() >= 3, "{strategy}: {traces:?}");
    }
}
