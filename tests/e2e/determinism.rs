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
    let distinct = |strategy| {
        ["1", "2", "3", "4"]
            .iter()
            .map(|s| run(s, strategy).0)
            .collect::<std::collections::HashSet<String>>()
            .len()
    };
    assert_eq!(distinct("random"), 4);
    // A single PCT execution mostly varies the threads' priorities.
    assert!(distinct("pct") >= 2);
}
