//! A finished thread's store and instance run the same thread of the next
//! execution: every execution must still behave exactly as on fresh
//! instances (globals, dropped data segments, fuel slices, traces).

use crate::support::sample;
use weft::runtime::{Outcome, Program, RunConfig};
use weft::sched::{Scheduler, Strategy};

/// Two threads that each check their instance is fresh (the mutable global
/// at its initial value, the passive segment not dropped), then change it;
/// the main thread also checks that `memory.init` of the dropped segment and
/// of the active one trap as they would.
const MODULE: &str = r#"(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory 1 1 shared)
  (global $g (mut i32) (i32.const 5))
  (global $h (mut i64) (i64.add (i64.const 40) (i64.const 2)))
  (data $active (i32.const 100) "a")
  (data $passive "xyz")
  (func $check (param $ok i32) (param $code i32)
    (if (i32.eqz (local.get $ok)) (then (call $exit (local.get $code)))))
  (func $fresh
    (call $check (i32.eq (global.get $g) (i32.const 5)) (i32.const 11))
    (call $check (i64.eq (global.get $h) (i64.const 42)) (i32.const 12))
    (global.set $g (i32.const 6))
    (global.set $h (i64.const 7))
    (memory.init $passive (i32.const 200) (i32.const 0) (i32.const 3))
    (data.drop $passive))
  (func (export "wasi_thread_start") (param i32 i32)
    (call $fresh)
    (i32.atomic.store (i32.const 8) (i32.const 1))
    (drop (memory.atomic.notify (i32.const 8) (i32.const 1))))
  (func (export "_start") (local $argc i32)
    (drop (call $args (i32.const 16) (i32.const 20)))
    (local.set $argc (i32.load (i32.const 16)))
    (call $fresh)
    (drop (call $spawn (i32.const 0)))
    (block $done
      (loop $wait
        (br_if $done (i32.atomic.load (i32.const 8)))
        (drop (memory.atomic.wait32 (i32.const 8) (i32.const 0) (i64.const -1)))
        (br $wait)))
    ;; A dropped segment is empty: an empty init at its end is fine.
    (memory.init $passive (i32.const 300) (i32.const 0) (i32.const 0))
    (if (i32.eq (local.get $argc) (i32.const 2))
      (then (memory.init $passive (i32.const 300) (i32.const 0) (i32.const 1))))
    (if (i32.eq (local.get $argc) (i32.const 3))
      (then (memory.init $active (i32.const 300) (i32.const 0) (i32.const 1))))))"#;

fn run(program: &mut Program, argc: usize) -> Outcome {
    let config = RunConfig {
        args: vec!["m".to_string(); argc],
        ..RunConfig::default()
    };
    let scheduler = weft::explore::scheduler(Strategy::Random, 3, 3, 100);
    program.execute(scheduler, &config).outcome
}

fn out_of_bounds(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Trap { message, .. } if message.contains("out of bounds memory access"))
}

#[test]
fn every_execution_runs_on_instances_as_fresh_ones() {
    let wasm = wat::parse_str(MODULE).unwrap();
    let mut program = Program::load(&wasm, Default::default()).unwrap();
    assert!(program.reuses_instances());
    for round in 0..4 {
        assert_eq!(run(&mut program, 1), Outcome::Exited(0), "round {round}");
        let dropped = run(&mut program, 2);
        assert!(out_of_bounds(&dropped), "round {round}: {dropped:?}");
        let active = run(&mut program, 3);
        assert!(out_of_bounds(&active), "round {round}: {active:?}");
    }
}

#[test]
fn a_module_that_changes_tables_gets_fresh_instances() {
    let wasm = wat::parse_str(
        r#"(module
          (memory 1 1 shared)
          (table 1 funcref)
          (func (export "_start") (table.set (i32.const 0) (ref.null func))))"#,
    )
    .unwrap();
    let mut program = Program::load(&wasm, Default::default()).unwrap();
    assert!(!program.reuses_instances());
    for _ in 0..2 {
        assert_eq!(run(&mut program, 1), Outcome::Exited(0));
    }
}

fn trace_hash(program: &mut Program, strategy: Strategy, seed: u64) -> String {
    let scheduler: Box<dyn Scheduler> = weft::explore::scheduler(strategy, seed, 3, 300);
    let result = program.execute(scheduler, &RunConfig::default());
    assert!(
        !matches!(result.outcome, Outcome::HostError(_)),
        "{:?}",
        result.outcome
    );
    result.trace_hash.to_string()
}

/// Executions on kept instances (each after a different one) hash as the
/// same executions on a new program.
#[test]
fn samples_trace_the_same_on_kept_and_fresh_instances() {
    for name in [
        "lost-update",
        "bounded-buffer",
        "abba-deadlock",
        "channel-pipeline",
        "lost-update-c",
        "lazy-init-race-c",
    ] {
        let wasm = std::fs::read(sample(name)).unwrap();
        let mut kept = Program::load(&wasm, Default::default()).unwrap();
        assert!(kept.reuses_instances(), "{name}");
        for strategy in [Strategy::Random, Strategy::Pct] {
            for seed in 0..6 {
                let warm = trace_hash(&mut kept, strategy, seed);
                let mut fresh = Program::load(&wasm, Default::default()).unwrap();
                let cold = trace_hash(&mut fresh, strategy, seed);
                assert_eq!(warm, cold, "{name}, {strategy:?}, seed {seed}");
            }
        }
    }
}
