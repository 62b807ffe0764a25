//! `memory.atomic.wait` and `memory.atomic.notify` become host calls under
//! weft; they must still trap exactly where the engine's own instructions
//! trap (misaligned, out of bounds, an offset that carries past 4 GiB, a
//! wait on a memory that is not shared) and return what they return.

use weft::runtime::{Outcome, Program, RunConfig};
use weft::sched::Strategy;

/// What plain wasmtime makes of `_start`: `Ok(())` or the trap's text.
fn under_wasmtime(wat: &str) -> Result<(), String> {
    let mut config = wasmtime::Config::new();
    config.wasm_threads(true).shared_memory(true);
    let engine = wasmtime::Engine::new(&config).unwrap();
    let module = wasmtime::Module::new(&engine, wat).unwrap();
    let mut store = wasmtime::Store::new(&engine, ());
    let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
    let start = instance
        .get_typed_func::<(), ()>(&mut store, "_start")
        .unwrap();
    start
        .call(&mut store, ())
        .map_err(|e| match e.downcast_ref::<wasmtime::Trap>() {
            Some(trap) => trap.to_string(),
            None => format!("{e:?}"),
        })
}

/// What weft makes of it: `Ok(())` or the trap's message.
fn under_weft(wat: &str) -> Result<(), String> {
    let wasm = wat::parse_str(wat).unwrap();
    let mut program = Program::load(&wasm, Default::default()).unwrap();
    let scheduler = weft::explore::scheduler(Strategy::Random, 0, 3, 100);
    match program.execute(scheduler, &RunConfig::default()).outcome {
        Outcome::Exited(0) => Ok(()),
        Outcome::Trap { message, .. } => Err(message),
        other => Err(format!("{other:?}")),
    }
}

/// A module whose `_start` runs `body` with one page of memory (`shared`
/// or not); `unreachable` after it marks a wrong result.
fn module(shared: bool, body: &str) -> String {
    let memory = if shared { "1 1 shared" } else { "1 1" };
    format!(
        r#"(module (memory {memory})
  (func (export "_start") {body}))"#
    )
}

#[test]
fn waits_and_notifies_trap_where_the_engine_traps() {
    let cases = [
        // In bounds and aligned: a notify wakes nobody, a wait with a wrong
        // expected value returns 1 ("not equal") at once.
        (
            true,
            "(if (i32.ne (memory.atomic.notify (i32.const 8) (i32.const 1)) (i32.const 0)) (then unreachable))",
            None,
        ),
        (
            true,
            "(if (i32.ne (memory.atomic.wait32 (i32.const 8) (i32.const 5) (i64.const -1)) (i32.const 1)) (then unreachable))",
            None,
        ),
        (
            true,
            "(drop (memory.atomic.notify (i32.const 65536) (i32.const 1)))",
            Some("out of bounds"),
        ),
        (
            true,
            "(drop (memory.atomic.notify (i32.const 65534) (i32.const 1)))",
            Some("unaligned atomic"),
        ),
        (
            true,
            "(drop (memory.atomic.notify (i32.const 6) (i32.const 1)))",
            Some("unaligned atomic"),
        ),
        // The offset carries past 4 GiB: no wrapping to address 4.
        (
            true,
            "(drop (memory.atomic.notify offset=8 (i32.const -4) (i32.const 1)))",
            Some("out of bounds"),
        ),
        (
            true,
            "(drop (memory.atomic.wait32 offset=8 (i32.const -4) (i32.const 0) (i64.const 0)))",
            Some("out of bounds"),
        ),
        (
            true,
            "(drop (memory.atomic.wait64 (i32.const 65536) (i64.const 0) (i64.const 0)))",
            Some("out of bounds"),
        ),
        (
            true,
            "(drop (memory.atomic.wait64 (i32.const 4) (i64.const 0) (i64.const 0)))",
            Some("unaligned atomic"),
        ),
        // Not shared: a notify returns 0 after the same checks; a wait traps.
        (
            false,
            "(if (i32.ne (memory.atomic.notify (i32.const 8) (i32.const 1)) (i32.const 0)) (then unreachable))",
            None,
        ),
        (
            false,
            "(drop (memory.atomic.notify (i32.const 65536) (i32.const 1)))",
            Some("out of bounds"),
        ),
        (
            false,
            "(drop (memory.atomic.wait32 (i32.const 8) (i32.const 0) (i64.const 0)))",
            Some("non-shared"),
        ),
    ];
    for (shared, body, trap) in cases {
        let wat = module(shared, body);
        let engine = under_wasmtime(&wat);
        let weft = under_weft(&wat);
        match trap {
            None => {
                assert_eq!(engine, Ok(()), "{body}");
                assert_eq!(weft, Ok(()), "{body}");
            }
            Some(kind) => {
                let engine = engine.expect_err(body);
                let weft = weft.expect_err(body);
                assert!(engine.contains(kind), "{body}: wasmtime: {engine}");
                assert!(weft.contains(kind), "{body}: weft: {weft}");
            }
        }
    }
}
