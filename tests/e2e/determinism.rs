//! The same seed gives the same schedule; different seeds different ones;
//! a failure replays exactly, even where the stack runs out.

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
        // A failure's schedule as found: minimized, the schedules of seeds
        // that find the same failure become one.
        "--no-minimize",
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

/// A spawned thread that recurses without end once it sees the main
/// thread's second increment; the main thread waits for it.
const STACK_OVERFLOW: &str = r#"(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (memory (export "memory") 1 1 shared)
  (func $rec (param i32)
    (drop (i32.atomic.rmw.add (i32.const 0) (i32.const 1)))
    (call $rec (i32.add (local.get 0) (i32.const 1))))
  (func (export "wasi_thread_start") (param i32 i32)
    (if (i32.ge_u (i32.atomic.load (i32.const 16)) (i32.const 2)) (then (call $rec (i32.const 0))))
    (drop (i32.atomic.rmw.add (i32.const 8) (i32.const 1)))
    (drop (memory.atomic.notify (i32.const 8) (i32.const 1))))
  (func (export "_start")
    (drop (call $spawn (i32.const 0)))
    (drop (i32.atomic.rmw.add (i32.const 16) (i32.const 1)))
    (drop (i32.atomic.rmw.add (i32.const 16) (i32.const 1)))
    (drop (i32.atomic.rmw.add (i32.const 16) (i32.const 1)))
    (block $d (loop $w
      (br_if $d (i32.atomic.load (i32.const 8)))
      (drop (memory.atomic.wait32 (i32.const 8) (i32.const 0) (i64.const -1)))
      (br $w)))))"#;

#[test]
fn a_stack_overflow_in_a_spawned_thread_replays_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let module = crate::support::wat_file(dir.path(), "overflow", STACK_OVERFLOW);
    for seed in ["1", "2", "3"] {
        let replay = dir.path().join(format!("overflow-{seed}.weft.json"));
        let found = crate::support::weft_in(
            dir.path(),
            &[
                "explore",
                crate::support::arg(&module),
                "--strategy",
                "random",
                "--seed",
                seed,
                "--jobs",
                "2",
                "--save-failure",
                crate::support::arg(&replay),
            ],
        );
        assert_eq!(found.code, 1, "{}", found.stdout);
        assert!(
            found.stdout.contains("call stack exhausted"),
            "{}",
            found.stdout
        );
        let replayed =
            crate::support::weft_in(dir.path(), &["replay", crate::support::arg(&replay)]);
        assert_eq!(replayed.code, 1, "{} {}", replayed.stdout, replayed.stderr);
        assert!(
            replayed.stdout.contains("reproduced"),
            "{}",
            replayed.stdout
        );
    }
}
