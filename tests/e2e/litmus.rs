//! The classic litmus shapes with atomics (store buffering, message
//! passing, load buffering): wasm's atomics are sequentially consistent,
//! so the exhaustive search must reach every sequentially consistent
//! outcome of each and never the one outside.

use weft::execution::Setup;
use weft::explore::{Exhausted, ExploreOptions, explore};
use weft::instrument::InstrumentOptions;
use weft::race::RaceMode;
use weft::runtime::Program;
use weft::sched::Strategy;

/// Two threads run `first` and `second` on `x` (address 0) and `y` (4),
/// leaving `r1` (8) and `r2` (12); the main thread joins them and traps
/// if the outcome is (`r1`, `r2`).
fn litmus(first: &str, second: &str, r1: i32, r2: i32) -> String {
    format!(
        r#"(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (memory (export "memory") 1 1 shared)
  (func $first {first})
  (func $second {second})
  (func (export "wasi_thread_start") (param $tid i32) (param $arg i32)
    (if (i32.eq (local.get $arg) (i32.const 1)) (then (call $first)) (else (call $second)))
    (drop (i32.atomic.rmw.add (i32.const 16) (i32.const 1)))
    (drop (memory.atomic.notify (i32.const 16) (i32.const 1))))
  (func (export "_start") (local $done i32)
    (drop (call $spawn (i32.const 1)))
    (drop (call $spawn (i32.const 2)))
    (block $joined (loop $wait
      (local.set $done (i32.atomic.load (i32.const 16)))
      (br_if $joined (i32.eq (local.get $done) (i32.const 2)))
      (drop (memory.atomic.wait32 (i32.const 16) (local.get $done) (i64.const -1)))
      (br $wait)))
    (if (i32.and
          (i32.eq (i32.atomic.load (i32.const 8)) (i32.const {r1}))
          (i32.eq (i32.atomic.load (i32.const 12)) (i32.const {r2})))
      (then unreachable))))"#
    )
}

/// Whether the exhaustive search reaches outcome (`r1`, `r2`); panics if
/// it neither reaches it nor completes.
fn reaches(first: &str, second: &str, r1: i32, r2: i32) -> bool {
    let wasm = wat::parse_str(litmus(first, second, r1, r2)).unwrap();
    // A claim of every schedule rests on the race check.
    let logged = InstrumentOptions {
        log_accesses: true,
        ..Default::default()
    };
    let mut program = Program::load(&wasm, logged).unwrap();
    let options = ExploreOptions {
        strategy: Strategy::Dpor,
        setup: Setup {
            races: RaceMode::Fail,
            ..Setup::default()
        },
        ..Default::default()
    };
    let exploration = explore(&mut program, &options, |_| {}).unwrap();
    match exploration.failure {
        Some(_) => true,
        None => {
            assert_eq!(
                exploration.exhausted,
                Some(Exhausted::All),
                "({r1}, {r2}): the search neither reached it nor completed"
            );
            false
        }
    }
}

/// Checks that exactly the outcomes in `allowed` are reached.
fn exactly(first: &str, second: &str, allowed: &[(i32, i32)]) {
    for r1 in 0..2 {
        for r2 in 0..2 {
            let expected = allowed.contains(&(r1, r2));
            assert_eq!(
                reaches(first, second, r1, r2),
                expected,
                "outcome ({r1}, {r2}) of\n  {first}\n  {second}"
            );
        }
    }
}

#[test]
fn store_buffering_never_reads_both_old_values() {
    exactly(
        "(i32.atomic.store (i32.const 0) (i32.const 1)) (i32.atomic.store (i32.const 8) (i32.atomic.load (i32.const 4)))",
        "(i32.atomic.store (i32.const 4) (i32.const 1)) (i32.atomic.store (i32.const 12) (i32.atomic.load (i32.const 0)))",
        &[(0, 1), (1, 0), (1, 1)],
    );
}

#[test]
fn message_passing_never_sees_the_flag_without_the_data() {
    exactly(
        "(i32.atomic.store (i32.const 0) (i32.const 1)) (i32.atomic.store (i32.const 4) (i32.const 1))",
        "(i32.atomic.store (i32.const 8) (i32.atomic.load (i32.const 4))) (i32.atomic.store (i32.const 12) (i32.atomic.load (i32.const 0)))",
        &[(0, 0), (0, 1), (1, 1)],
    );
}

#[test]
fn load_buffering_never_reads_values_from_the_future() {
    exactly(
        "(i32.atomic.store (i32.const 8) (i32.atomic.load (i32.const 0))) (i32.atomic.store (i32.const 4) (i32.const 1))",
        "(i32.atomic.store (i32.const 12) (i32.atomic.load (i32.const 4))) (i32.atomic.store (i32.const 0) (i32.const 1))",
        &[(0, 0), (0, 1), (1, 0)],
    );
}
