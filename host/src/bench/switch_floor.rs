//! What a context switch costs wasmtime alone, on weft's engine: two
//! threads that each, over and over, call an asynchronous host function
//! that suspends them once, polled in turn. No weft code runs between the
//! suspend and the resume, so this is the floor under weft's own switch
//! (`weft bench` prints both).

use crate::runtime::Park;
use crate::runtime::engine;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use wasmtime::{Linker, Module, Store};

/// Switches each thread makes at most (the deadline may come first).
const SWITCHES_PER_THREAD: i32 = 200_000;

/// Calls `host.park` `$n` times.
const PARKING_LOOP: &str = r#"(module
  (import "host" "park" (func $park))
  (func (export "run") (param $n i32)
    (loop $again
      (call $park)
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $again (i32.gt_s (local.get $n) (i32.const 0))))))"#;

type Thread = Pin<Box<dyn Future<Output = wasmtime::Result<()>>>>;

/// The time the switches took and how many there were, measured until
/// `deadline` or [`SWITCHES_PER_THREAD`] each.
///
/// # Errors
///
/// When the engine or the module cannot be made (not expected).
pub fn measure(deadline: Instant) -> wasmtime::Result<(Duration, u64)> {
    let engine = engine(false)?;
    let module = Module::new(&engine, PARKING_LOOP)?;
    let mut linker: Linker<()> = Linker::new(&engine);
    linker.func_wrap_async("host", "park", |_caller, (): ()| {
        Box::new(async { Park::default().await })
    })?;
    let mut threads: Vec<Thread> = (0..2)
        .map(|_| {
            let (engine, module, linker) = (engine.clone(), module.clone(), linker.clone());
            let thread: Thread = Box::pin(async move {
                let mut store = Store::new(&engine, ());
                store.set_fuel(u64::MAX)?;
                store.fuel_async_yield_interval(Some(u64::MAX))?;
                let instance = linker.instantiate_async(&mut store, &module).await?;
                let run = instance.get_typed_func::<i32, ()>(&mut store, "run")?;
                run.call_async(&mut store, SWITCHES_PER_THREAD).await
            });
            thread
        })
        .collect();
    let mut cx = Context::from_waker(Waker::noop());
    // The first poll of each instantiates it: not a switch.
    for thread in &mut threads {
        if let Poll::Ready(result) = thread.as_mut().poll(&mut cx) {
            result?;
        }
    }
    let start = Instant::now();
    let mut switches = 0;
    let mut running = [true, true];
    while running.contains(&true) && (switches % 1024 != 0 || Instant::now() < deadline) {
        for (thread, running) in threads.iter_mut().zip(&mut running) {
            if *running {
                switches += 1;
                if let Poll::Ready(result) = thread.as_mut().poll(&mut cx) {
                    result?;
                    *running = false;
                }
            }
        }
    }
    Ok((start.elapsed(), switches))
}
