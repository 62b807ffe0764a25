//! Hand-written WAT modules: no memory, private memory, a defined shared
//! memory with data segments, and threads through `wasi.thread-spawn`.

use crate::support::{arg, wat_file, weft_in};

#[test]
fn module_without_memory_runs_as_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let m = wat_file(dir.path(), "plain", r#"(module (func (export "_start")))"#);
    let out = weft_in(
        dir.path(),
        &["explore", arg(&m), "--iterations", "5", "--json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["executions"], 5);
}

#[test]
fn private_memory_module_prints_and_exits_with_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let m = wat_file(
        dir.path(),
        "hello",
        r#"(module
             (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
             (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
             (memory (export "memory") 1)
             (data (i32.const 16) "hello from wat\n")
             (func (export "_start")
               (i32.store (i32.const 0) (i32.const 16))
               (i32.store (i32.const 4) (i32.const 15))
               (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
               (call $exit (i32.const 3))))"#,
    );
    let out = weft_in(dir.path(), &["run", arg(&m), "--json", "--no-save"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "exit");
    assert_eq!(json["stdout"], "hello from wat\n");
}

/// A call through wasm-ld's stub for a signature that does not match the
/// definition (a module built without `weft build`'s check, which refuses
/// them) traps with the function named, in a threaded module too.
#[test]
fn a_signature_mismatch_stub_names_the_function_it_stands_for() {
    let dir = tempfile::tempdir().unwrap();
    let m = wat_file(
        dir.path(),
        "stub",
        r#"(module
             (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
             (memory 1 1 shared)
             (func $signature_mismatch:__VERIFIER_atomic_begin unreachable)
             (func (export "wasi_thread_start") (param i32 i32))
             (func (export "_start")
               (drop (call $spawn (i32.const 0)))
               (call $signature_mismatch:__VERIFIER_atomic_begin)))"#,
    );
    let out = weft_in(dir.path(), &["run", arg(&m), "--json", "--no-save"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "assertion");
    let message = json["failure"]["message"].as_str().unwrap();
    assert!(
        message.contains("`__VERIFIER_atomic_begin` was called with a signature that does not match its definition"),
        "{message}"
    );
}

/// A call through a function pointer that reaches a function of another
/// type that native code would not run either (the function takes more
/// arguments than it is given) traps, and the failure says what that
/// means for C; one that native code runs (fewer arguments) goes on.
#[test]
fn a_call_through_a_pointer_of_another_type_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let module = |callee: &str| {
        format!(
            r#"(module
             (type $takes_one (func (param i32)))
             (table 1 funcref)
             (func $callee {callee})
             (elem (i32.const 0) func $callee)
             (func (export "_start")
               (call_indirect (type $takes_one) (i32.const 7) (i32.const 0))))"#
        )
    };
    let fewer = wat_file(dir.path(), "fewer", &module(""));
    let out = weft_in(dir.path(), &["run", arg(&fewer), "--json", "--no-save"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let m = wat_file(dir.path(), "pointer", &module("(param i32 i32)"));
    let out = weft_in(dir.path(), &["run", arg(&m), "--json", "--no-save"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let message = out.json()["failure"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("indirect call type mismatch")
            && message
                .contains("a call through a function pointer reached a function of another type"),
        "{message}"
    );
}

/// A module of `tables` tables, each holding a function that returns its
/// table's number, that exits with the sum of calls through every table.
fn tables_module(tables: u32) -> String {
    let mut defs = String::new();
    let mut sum = String::from("(i32.const 0)");
    for t in 0..tables {
        defs.push_str(&format!(
            "(table $t{t} 1 funcref) (func $f{t} (result i32) (i32.const {t})) \
             (elem (table $t{t}) (i32.const 0) func $f{t})\n"
        ));
        sum = format!("(i32.add {sum} (call_indirect $t{t} (type $r) (i32.const 0)))");
    }
    format!(
        r#"(module
             (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
             (type $r (func (result i32)))
             {defs}
             (func (export "_start") (call $exit {sum})))"#
    )
}

#[test]
fn modules_with_several_tables_run_and_too_many_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let four = wat_file(dir.path(), "four", &tables_module(4));
    let out = weft_in(dir.path(), &["run", arg(&four), "--json", "--no-save"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "exit");
    assert!(
        json["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("code 6"),
        "0 + 1 + 2 + 3: {}",
        out.stdout
    );
    let five = wat_file(dir.path(), "five", &tables_module(5));
    let out = weft_in(dir.path(), &["run", arg(&five), "--json", "--no-save"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("defines 5 tables; weft supports at most 4"),
        "{}",
        out.stderr
    );
}

/// Two threads add to a counter with an atomic read-modify-write (correct)
/// or a separate load and store (racy); the main thread waits for both with
/// wait/notify and checks the sum. The memory is defined in the module with
/// an active data segment holding the start value 100.
fn counter_module(racy: bool) -> String {
    let bump = if racy {
        "(i32.atomic.store (i32.const 0) (i32.add (i32.atomic.load (i32.const 0)) (i32.const 1)))"
    } else {
        "(drop (i32.atomic.rmw.add (i32.const 0) (i32.const 1)))"
    };
    format!(
        r#"(module
          (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
          (memory (export "memory") 1 1 shared)
          (data (i32.const 0) "\64\00\00\00")
          (func $work (local $i i32)
            (loop $l
              {bump}
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (br_if $l (i32.lt_u (local.get $i) (i32.const 5))))
            (drop (i32.atomic.rmw.add (i32.const 4) (i32.const 1)))
            (drop (memory.atomic.notify (i32.const 4) (i32.const 1))))
          (func (export "wasi_thread_start") (param i32 i32) (call $work))
          (func (export "_start") (local $done i32)
            (drop (call $spawn (i32.const 0)))
            (drop (call $spawn (i32.const 0)))
            (block $all
              (loop $wait
                (local.set $done (i32.atomic.load (i32.const 4)))
                (br_if $all (i32.eq (local.get $done) (i32.const 2)))
                (drop (memory.atomic.wait32 (i32.const 4) (local.get $done) (i64.const -1)))
                (br $wait)))
            (if (i32.ne (i32.atomic.load (i32.const 0)) (i32.const 110)) (then unreachable))))"#
    )
}

#[test]
fn correct_wat_threads_pass_every_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let m = wat_file(dir.path(), "counter", &counter_module(false));
    for strategy in ["random", "pct"] {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&m),
                "--strategy",
                strategy,
                "--iterations",
                "500",
                "--json",
            ],
        );
        assert_eq!(out.code, 0, "{strategy}: {}", out.stdout);
        assert!(out.json()["distinct_traces"].as_u64().unwrap() > 10);
    }
}

#[test]
fn racy_wat_threads_fail_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let m = wat_file(dir.path(), "racy", &counter_module(true));
    let out = weft_in(dir.path(), &["explore", arg(&m), "--json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "assertion");
    assert!(
        json["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("unreachable")
    );
    let replay = json["replay_file"].as_str().unwrap();
    let again = weft_in(dir.path(), &["replay", replay, "--json"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert_eq!(again.json()["trace_hash"], json["trace_hash"]);
}

#[test]
fn timed_wait_times_out_in_virtual_time() {
    let dir = tempfile::tempdir().unwrap();
    let m = wat_file(
        dir.path(),
        "timeout",
        r#"(module (memory 1 1 shared)
             (func (export "_start")
               (if (i32.ne (memory.atomic.wait32 (i32.const 0) (i32.const 0) (i64.const 5000000000))
                           (i32.const 2))
                 (then unreachable))))"#,
    );
    let out = weft_in(dir.path(), &["run", arg(&m), "--json", "--no-save"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.json()["elapsed_ms"].as_f64().unwrap() < 5000.0);
}

#[test]
fn wait_without_a_waker_is_a_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let m = wat_file(
        dir.path(),
        "stuck",
        r#"(module (memory 1 1 shared)
             (func (export "_start")
               (drop (memory.atomic.wait32 (i32.const 8) (i32.const 0) (i64.const -1)))))"#,
    );
    let out = weft_in(dir.path(), &["run", arg(&m), "--json", "--no-save"]);
    assert_eq!(out.code, 1);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "deadlock");
    assert!(json["failure"]["message"].as_str().unwrap().contains("0x8"));
}

/// One thread making `n` atomic loads, then a second thread making `n`
/// more while the first waits for it with a plain spin on an atomic flag.
fn loads_module(n: u32) -> String {
    format!(
        r#"(module
          (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
          (memory 1 1 shared)
          (func $loads (local $i i32)
            (loop $l
              (drop (i32.atomic.load (i32.const 64)))
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (i32.store (i32.const 128) (local.get $i))
              (br_if $l (i32.lt_u (local.get $i) (i32.const {n})))))
          (func (export "wasi_thread_start") (param i32 i32)
            (call $loads)
            (i32.atomic.store (i32.const 0) (i32.const 1)))
          (func (export "_start")
            (call $loads)
            (drop (call $spawn (i32.const 0)))
            (loop $wait
              (br_if $wait (i32.eqz (i32.atomic.load (i32.const 0)))))))"#
    )
}

#[test]
fn points_passed_without_the_host_are_all_counted_and_hashed() {
    let dir = tempfile::tempdir().unwrap();
    let m = wat_file(dir.path(), "loads", &loads_module(1000));
    let run = |extra: &[&str]| {
        let mut args = vec!["run", arg(&m), "--json", "--no-save", "--seed", "3"];
        args.extend_from_slice(extra);
        weft_in(dir.path(), &args)
    };
    let out = run(&[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json = out.json();
    // 1000 loads alone, the spawn, then the two threads' loads and the
    // main thread's flag loads, each a step.
    let steps = json["steps"].as_u64().unwrap();
    assert!(steps > 2001, "{steps}");
    assert_eq!(run(&[]).json()["trace_hash"], json["trace_hash"]);
    // The step limit holds exactly inside a stretch of points passed on a
    // budget, and again after ten times as many steps under a fair
    // schedule. The loads' count changes memory: a long execution, no
    // livelock.
    let limited = run(&["--max-steps", "70"]);
    assert_eq!(limited.code, 3, "{}", limited.stderr);
    let limited = limited.json();
    assert_eq!(limited["status"], "inconclusive");
    let message = limited["inconclusive_because"].as_str().unwrap();
    assert!(
        message.contains("still running after 770 steps (the last 700 under a fair schedule)"),
        "{message}"
    );
}
