//! Every time limit holds within a second, even when one execution runs
//! long: the run's end stops the execution in progress, which is neither
//! a pass nor a failure.

use crate::support::{arg, sample, wat_file, weft_in};
use std::time::{Duration, Instant};

/// A module whose one execution computes for minutes between scheduling
/// points (its fuel slices are the only ones).
const LONG: &str = r#"(module (memory (export "memory") 1)
  (func (export "_start") (local i64)
    (loop $l
      (local.set 0 (i64.add (local.get 0) (i64.const 1)))
      (br_if $l (i64.lt_u (local.get 0) (i64.const 100000000000))))))"#;

/// Runs weft with `args` and returns how long it took.
fn timed(dir: &std::path::Path, args: &[&str]) -> (crate::support::Output, Duration) {
    let started = Instant::now();
    let out = weft_in(dir, args);
    (out, started.elapsed())
}

#[test]
fn a_long_execution_cannot_hold_explore_past_its_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let long = wat_file(dir.path(), "long", LONG);
    let (out, took) = timed(
        dir.path(),
        &[
            "explore",
            arg(&long),
            "--time-limit",
            "2s",
            "--max-fuel",
            "10000000000000",
            "--execution-time-limit",
            "10m",
            "--no-save",
        ],
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
    // Nothing finished: no verdict, not a pass.
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("no execution finished within --time-limit 2s"),
        "{}",
        out.stderr
    );
    // And each execution's own limit holds too.
    let (out, took) = timed(
        dir.path(),
        &[
            "run",
            arg(&long),
            "--max-fuel",
            "10000000000000",
            "--execution-time-limit",
            "1s",
            "--no-save",
        ],
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout.contains("INCONCLUSIVE") && out.stdout.contains("--execution-time-limit"),
        "{}",
        out.stdout
    );
}

#[test]
fn the_search_for_racy_sites_counts_in_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let checksum = sample("checksum");
    let explore = |budget: &[&str]| {
        let mut args = vec!["explore", arg(&checksum), "--races", "schedule"];
        args.extend_from_slice(budget);
        timed(dir.path(), &args)
    };
    // What loading the module costs before any limit runs (a debug build
    // compiles slowly, more so on a loaded machine): one execution's run.
    let (out, loading) = explore(&["--iterations", "1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (out, took) = explore(&["--time-limit", "1s"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        took < loading + Duration::from_secs(2),
        "{took:?} (loading and one execution: {loading:?})"
    );
}

#[test]
fn bench_on_a_looping_guest_ends_at_its_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let long = wat_file(dir.path(), "long", LONG);
    let (out, took) = timed(
        dir.path(),
        &[
            "bench",
            arg(&long),
            "--time-limit",
            "2s",
            "--executions",
            "10",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The micro benchmarks count in the limit too; loading the modules
    // before it starts takes a moment of its own, several seconds for an
    // unoptimised weft on a loaded machine (up to 7 s seen while the suite
    // ran; ten executions of the loop would take hours).
    assert!(took < Duration::from_secs(12), "{took:?}");
    assert!(
        out.stdout.contains("the time limit of 2s came first"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_time_limit_too_long_for_the_clock_is_no_limit() {
    // Added to the clock as it is, the largest limit `humantime` reads
    // overflowed and weft panicked.
    let dir = tempfile::tempdir().unwrap();
    let module = sample("lost-update");
    for (command, limit) in [
        ("explore", "--time-limit"),
        ("run", "--execution-time-limit"),
    ] {
        let out = weft_in(
            dir.path(),
            &[
                command,
                arg(&module),
                "--no-save",
                limit,
                "18446744073709551615s",
            ],
        );
        assert!(out.code == 0 || out.code == 1, "{command}: {}", out.stderr);
        assert!(
            !out.stderr.contains("panicked"),
            "{command}: {}",
            out.stderr
        );
    }
}
