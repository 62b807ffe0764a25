//! One program runs many executions over one shared memory, reset in
//! between: every execution must behave as in a fresh memory, even after an
//! earlier one grew it and changed its data.

use weft::runtime::{Outcome, Program, RunConfig};
use weft::sched::RandomScheduler;

/// A module with a shared memory of 1 to 4 pages and a data byte 42 at 0.
/// Its argument count picks what it does:
/// 1: checks the fresh state (size 1, byte 42, grow returns 1, grown page
///    zero), then changes the byte, grows and writes the grown pages;
/// 2: loads past the initial size; 3: fills past it; 4: copies from past
///    it; 5: stores atomically past it through the offset of the
///    instruction; 6: stores a vector that straddles the end (each must trap
///    as out of bounds); 7: loads the last byte in bounds.
const MODULE: &str = r#"(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory 1 4 shared)
  (data (i32.const 0) "\2a")
  (func $check (param $ok i32) (param $code i32)
    (if (i32.eqz (local.get $ok)) (then (call $exit (local.get $code)))))
  (func (export "_start") (local $argc i32)
    (drop (call $args (i32.const 16) (i32.const 20)))
    (local.set $argc (i32.load (i32.const 16)))
    (if (i32.eq (local.get $argc) (i32.const 2))
      (then (drop (i32.load (i32.const 65536))) (return)))
    (if (i32.eq (local.get $argc) (i32.const 3))
      (then (memory.fill (i32.const 65530) (i32.const 1) (i32.const 10)) (return)))
    (if (i32.eq (local.get $argc) (i32.const 4))
      (then (memory.copy (i32.const 0) (i32.const 65536) (i32.const 4)) (return)))
    (if (i32.eq (local.get $argc) (i32.const 5))
      (then (i32.atomic.store offset=65536 (i32.const 8) (i32.const 1)) (return)))
    (if (i32.eq (local.get $argc) (i32.const 6))
      (then (v128.store (i32.const 65528) (v128.const i64x2 1 2)) (return)))
    (if (i32.eq (local.get $argc) (i32.const 7))
      (then (call $check (i32.eqz (i32.load8_u offset=65535 (i32.const 0))) (i32.const 18))
            (return)))
    (call $check (i32.eq (memory.size) (i32.const 1)) (i32.const 11))
    (call $check (i32.eq (i32.load8_u (i32.const 0)) (i32.const 42)) (i32.const 12))
    (i32.store8 (i32.const 0) (i32.const 7))
    (call $check (i32.eq (memory.grow (i32.const 2)) (i32.const 1)) (i32.const 13))
    (call $check (i32.eq (memory.size) (i32.const 3)) (i32.const 14))
    (call $check (i32.eqz (i32.load (i32.const 70000))) (i32.const 15))
    (call $check (i32.eqz (i32.load (i32.const 196604))) (i32.const 16))
    (i32.store (i32.const 70000) (i32.const -1))
    (memory.fill (i32.const 131072) (i32.const 9) (i32.const 65536))
    (call $check (i32.eq (memory.grow (i32.const 2)) (i32.const -1)) (i32.const 17))))"#;

fn run(program: &mut Program, argc: usize) -> Outcome {
    let config = RunConfig {
        args: vec!["m".to_string(); argc],
        ..RunConfig::default()
    };
    let result = program.execute(Box::new(RandomScheduler::new(1)), &config);
    result.outcome
}

fn out_of_bounds(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Trap { message, .. } if message.contains("out of bounds memory access"))
}

#[test]
fn every_execution_sees_a_fresh_memory() {
    let wasm = wat::parse_str(MODULE).unwrap();
    let mut program = Program::load(&wasm, Default::default()).unwrap();
    for _ in 0..5 {
        assert_eq!(run(&mut program, 1), Outcome::Exited(0));
    }
}

#[test]
fn accesses_past_the_size_trap_after_an_execution_grew_the_memory() {
    let wasm = wat::parse_str(MODULE).unwrap();
    let mut program = Program::load(&wasm, Default::default()).unwrap();
    for argc in [2, 3, 4, 5, 6] {
        let fresh = run(&mut Program::load(&wasm, Default::default()).unwrap(), argc);
        assert!(
            out_of_bounds(&fresh),
            "fresh memory, mode {argc}: {fresh:?}"
        );
        assert_eq!(run(&mut program, 1), Outcome::Exited(0));
        let reused = run(&mut program, argc);
        assert_eq!(reused, fresh, "mode {argc}");
    }
    assert_eq!(run(&mut program, 1), Outcome::Exited(0));
    assert_eq!(run(&mut program, 7), Outcome::Exited(0));
}

/// The main thread grows the memory while a thread it spawned earlier
/// waits; that thread then reads and writes the new page, which must work
/// in every execution on the kept memory and instances.
const GROW_WHILE_RUNNING: &str = r#"(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory 1 2 shared)
  (func $await (param $addr i32)
    (loop $wait
      (if (i32.eqz (i32.atomic.load (local.get $addr)))
        (then
          (drop (memory.atomic.wait32 (local.get $addr) (i32.const 0) (i64.const -1)))
          (br $wait)))))
  (func (export "wasi_thread_start") (param i32 i32)
    (call $await (i32.const 0))
    (i32.store (i32.const 65540) (i32.add (i32.load (i32.const 65536)) (i32.const 1)))
    (i32.atomic.store (i32.const 4) (i32.const 1))
    (drop (memory.atomic.notify (i32.const 4) (i32.const 1))))
  (func (export "_start")
    (drop (call $spawn (i32.const 0)))
    (if (i32.ne (memory.grow (i32.const 1)) (i32.const 1)) (then (call $exit (i32.const 3))))
    (i32.store (i32.const 65536) (i32.const 41))
    (i32.atomic.store (i32.const 0) (i32.const 1))
    (drop (memory.atomic.notify (i32.const 0) (i32.const 1)))
    (call $await (i32.const 4))
    (if (i32.ne (i32.load (i32.const 65540)) (i32.const 42)) (then (call $exit (i32.const 4))))))"#;

#[test]
fn a_thread_sees_the_memory_another_thread_grew() {
    let wasm = wat::parse_str(GROW_WHILE_RUNNING).unwrap();
    let mut program = Program::load(&wasm, Default::default()).unwrap();
    for seed in 0..20 {
        let config = RunConfig::default();
        let result = program.execute(Box::new(RandomScheduler::new(seed)), &config);
        assert_eq!(result.outcome, Outcome::Exited(0), "seed {seed}");
    }
}
