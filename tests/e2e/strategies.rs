//! Every exploration strategy on correct programs (no false failure, in
//! particular no livelock reported for a spin lock) and on a bug only some
//! of them find, and the strategy option's errors.

use crate::support::{arg, manifest, sample, sample_names, weft_in};

const STRATEGIES: [&str; 5] = ["random", "pct", "pos", "surw", "portfolio"];

fn explore(module: &str, strategy: &str, iterations: &str) -> crate::support::Output {
    let dir = tempfile::tempdir().unwrap();
    weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample(module)),
            "--strategy",
            strategy,
            "--iterations",
            iterations,
            "--json",
            "--no-save",
        ],
    )
}

/// Correct samples that finish quickly, spin locks and busy waiting
/// included.
fn correct_samples() -> Vec<String> {
    sample_names()
        .into_iter()
        .filter(|name| manifest(name)["expect"] == "pass")
        .filter(|name| !["classes", "imunit-tck", "checksum"].contains(&name.as_str()))
        .collect()
}

#[test]
fn no_strategy_reports_a_failure_on_a_correct_program() {
    let samples = correct_samples();
    assert!(samples.iter().any(|s| s == "spin-lock-c"));
    assert!(samples.iter().any(|s| s == "busy-wait-c"));
    for name in &samples {
        for strategy in STRATEGIES {
            let out = explore(name, strategy, "200");
            assert_eq!(out.code, 0, "{name} under {strategy}: {}", out.stdout);
        }
    }
}

#[test]
fn the_default_portfolio_finds_the_two_stage_bug_and_names_the_strategy() {
    let out = explore("two-stage-c", "portfolio", "2000");
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "assertion");
    // Uniform random walk misses it.
    let out = explore("two-stage-c", "random", "300");
    assert_eq!(out.code, 0, "{}", out.stdout);
}

#[test]
fn an_unknown_strategy_is_a_usage_error() {
    let out = explore("lost-update", "dfs-forever", "10");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("dfs-forever"), "{}", out.stderr);
}

#[test]
fn dfs_finds_a_one_preemption_bug_and_says_when_its_bound_is_exhausted() {
    let out = explore("lost-update-c", "dfs", "5000");
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["failure"]["kind"], "assertion");
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("spin-lock-c")),
            "--strategy",
            "dfs",
            "--preemption-bound",
            "0",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("schedules with at most 0 preemptions: no failure"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_preemption_bound_without_dfs_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("lost-update")),
            "--preemption-bound",
            "2",
        ],
    );
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--strategy dfs"), "{}", out.stderr);
}

#[test]
fn dpor_finds_a_bug_and_claims_only_what_it_explored() {
    let out = explore("lost-update-c", "dpor", "5000");
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["failure"]["kind"], "assertion");
    // A correct hand-off with a spinning reader: every schedule runs, and
    // the report says so.
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &["explore", arg(&sample("publish-c")), "--strategy", "dpor"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout.contains("explored all") && out.stdout.contains("schedules: no failure"),
        "{}",
        out.stdout
    );
    let json = explore("publish-c", "dpor", "100000").json();
    assert_eq!(json["exhaustive"], true);
    // Cut short by --iterations: no claim.
    let json = explore("publish-c", "dpor", "10").json();
    assert_eq!(json["exhaustive"], false);
    // A guest value choice is not enumerated: no claim either.
    let choose = crate::support::wat_file(
        dir.path(),
        "choose",
        r#"(module (import "weft" "choose" (func $choose (param i64) (result i64)))
             (func (export "_start") (drop (call $choose (i64.const 2)))))"#,
    );
    let out = weft_in(
        dir.path(),
        &["explore", arg(&choose), "--strategy", "dpor", "--json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["exhaustive"], false);
    let plain =
        crate::support::wat_file(dir.path(), "plain", r#"(module (func (export "_start")))"#);
    let out = weft_in(
        dir.path(),
        &["explore", arg(&plain), "--strategy", "dpor", "--json"],
    );
    assert_eq!(out.json()["exhaustive"], true, "{}", out.stdout);
}
